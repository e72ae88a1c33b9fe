print("rchat")
