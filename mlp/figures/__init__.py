"""Figures: plotly figures and SVG drawn from plain arrays. No training, no settings, no streamlit.

style     colours, fonts, the shared layout, PNG images, figures built without re-validation
curves    loss and accuracy side by side, the learning rate, runs compared
plane     decision boundaries, each hidden unit's map, the toy sets
classes   the confusion matrix, a prediction's probabilities, digits side by side
tensors   a tensor as a heatmap, the activations' spread per layer
diagrams  SVG shape diagrams of a step: operands to scale, the matched size highlighted
"""
