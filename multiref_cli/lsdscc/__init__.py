"""``multiref lsdscc ...``: the command group (group.py) and one module per subcommand."""
