print("spoold: not built yet")
