"""mlp: the library behind the MLP Playground. Usable from a notebook; never imports streamlit.

Modules: `model` (the nn.Module MLP), `manual` (the same network with the math written out),
`gradcheck` (manual gradients against autograd and finite differences), `data` (2D toy sets,
MNIST), `train` (one training engine), `device` (CUDA, MPS or CPU).
"""

__version__ = "0.1.0"
