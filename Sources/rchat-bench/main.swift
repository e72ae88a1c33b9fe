print("usage: rchat-bench relay")
