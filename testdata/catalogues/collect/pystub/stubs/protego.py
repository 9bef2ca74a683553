class Protego: pass
