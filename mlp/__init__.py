"""mlp: the library behind the MLP Playground. Usable from a notebook; never imports streamlit.

Layers; arrows point down (tests/test_repo.py checks it):

    core (imports only the core)
        spec.py       a setting's one declaration: default, range, link name, label, help, when it applies
        activations.py  the activations' table: each one's every form (model, manual, fast path, page)
        model.py      the MLP as an nn.Module, seeded inits, to and from the notes' [(W, b)]
        manual.py     the same network with every step of forward and backprop written out
        gradcheck.py  manual gradients against autograd (float64) and finite differences
        metrics.py    confusion matrix, per-class scores, top-k, MSE and R²
        device.py     CUDA, then Apple MPS, then the CPU; CPU threads for a block
        io.py         models to safetensors and back, the architecture in the metadata
        errors.py     errors a person caused, with their own text kept apart
        data/         toy sets, CSV points, bounded checked downloads, MNIST (parse, cache, sample),
                      drawn digits
        train/        one engine: config, schedule, optimizer, batches, gradients, guard, trainer;
                      fastpath/, a small network's step as one NumPy computation
    links/            each setting declared once, and the link form (imports only the core)
    figures/          plotly figures and SVG from plain arrays: no training, no settings
    export/           a run as a notebook or a script in plain PyTorch that gives its numbers
    lessons/          one model per page: its settings, its batch or points, what it shows
    runs/             a visitor's runs: the playground's frames, MNIST jobs, what a run shows
    curriculum/       the lessons, the challenges, the guided tour, the teacher task
    rooms/            a class's rooms and their results, in SQLite or PostgreSQL (on curriculum)
"""

__version__ = "0.1.0"
