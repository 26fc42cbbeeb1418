"""Lessons: one model per page, between the widgets and the core. No streamlit in here either.

forward_backward  the step-by-step page: its settings, the batch, one pass run both ways
shapes            each step's shape story
checks            each step's sanity checks; manual gradients against autograd and finite differences
tables            every tensor's bytes, every layer's parameters and FLOPs
init_spread       the activations' scale across a deep stack, per initialisation
playground        the 2D playground's settings, presets and points
mnist             the MNIST page's settings and what a model file may bring
"""
