from multiref.cli import run

run()
