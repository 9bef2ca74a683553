class AsyncClient: pass
class HTTPError(Exception): pass
