"""Lessons: one model per page, between the widgets and the core. No streamlit in here either.

settings          what every page's settings share: ranges, hidden widths, the link form
format            numbers as a page shows them
forward_backward  the step-by-step page: its settings, the batch, one pass run both ways
shapes            each step's shape story
checks            each step's sanity checks; manual gradients against autograd and finite differences
tables            every tensor's bytes, every layer's parameters and FLOPs
init_spread       the activations' scale across a deep stack, per initialisation
playground        the 2D playground's settings, presets and points
playground_run    one visitor's playground run and what a frame draws
mnist             the MNIST page's settings, one run, its evaluation, a visitor's runs
"""
