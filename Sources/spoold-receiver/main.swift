print("spoold-receiver: not built yet")
