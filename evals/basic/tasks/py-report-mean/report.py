from stats import mean


def report(name, scores):
    return f"{name}: average {mean(scores):.2f} over {len(scores)} scores"
