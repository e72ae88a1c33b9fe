print("usage: rchat-relay --listen HOST:PORT")
