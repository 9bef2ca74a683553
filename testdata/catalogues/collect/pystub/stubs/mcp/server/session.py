class ServerSession: pass
