def run(node, quick, rounds=None):
    raise NotImplementedError
