from . import exc
class Repo:
    def __init__(self, *a, **k): pass
