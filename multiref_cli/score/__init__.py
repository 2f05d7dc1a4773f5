"""``multiref score``: the command (command.py), its output formats (report.py) and its
statistics (stats.py)."""
