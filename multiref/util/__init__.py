"""Small utilities under everything: files (local or remote), progress, errors."""
