"""mlp.metrics: confusion, per-class scores, top-k."""

import numpy as np
import pytest

from mlp.metrics import confusion_matrix, per_class, top_k


def test_confusion_and_per_class_scores():
    y_true = np.array([0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 2, 0])
    confusion = confusion_matrix(y_true, y_pred, 3)
    assert confusion.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    rows = per_class(confusion)
    assert rows[1]["precision"] == pytest.approx(2 / 3) and rows[1]["recall"] == 1.0
    assert rows[0]["support"] == 2
    classes, probs = top_k(np.array([[0.1, 0.7, 0.2]]), 2)
    assert classes.tolist() == [[1, 2]] and probs.tolist() == [[0.7, 0.2]]
