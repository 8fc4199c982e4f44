print("spoold-bench: not written yet")
