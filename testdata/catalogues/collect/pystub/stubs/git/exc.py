class BadName(Exception): pass
