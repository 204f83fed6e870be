"tinybook's benchmark suite against numpy, torch, torch.compile and tinygrad: `python -m bench` (see README.md)."
