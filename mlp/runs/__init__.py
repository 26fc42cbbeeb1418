"""Runs: a visitor's page state, the network it trains, and what it shows as it goes.

playground    one visitor's playground run: its network and trainer, stepped a frame's budget at a time
playground_view  what a playground run shows: the plane, units' maps, dead units, the numbers, the banner
exports       what a run is saved as: the files a page's Export offers
diagnosis     what the playground says about a run that went wrong, naming the cause
network_view  the playground's network picture and the space its last hidden layer sees
units         one unit up close: its map, its computation at a point; a weight set by hand
mnist         one MNIST run, its evaluation, and a visitor's session of runs
"""
