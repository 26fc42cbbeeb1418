"""mlp.data.points: points from a CSV file, and the CSV a data set saves as."""

import numpy as np
import pytest

from mlp.data import points_csv, read_points_csv
from mlp.errors import InputError
from mlp.lessons.playground import PRESETS, make_points


def csv(rows: list[str], header: str = "x1,x2,label") -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


GOOD = [f"{i * 0.1},{-i * 0.2},{i % 2}" for i in range(12)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (csv(GOOD, header="a,b,c"), "Expected the header x1, x2, label"),
        (csv(GOOD, header="x1,x2"), "Expected the header x1, x2, label"),
        (csv([*GOOD, "1.0,abc,1"]), "Row 14 .* column x2, has 'abc', which is not a finite number"),
        (csv([*GOOD, "1.0,nan,1"]), "column x2, has 'nan'"),
        (csv([*GOOD, "1.0,,1"]), "column x2, is empty"),
        (csv([*GOOD, "inf,1,1"]), "column x1, has 'inf'"),
        (csv([f"{i},{i},1" for i in range(12)]), "Every point has label 1: a classifier needs at least two"),
        (csv([*GOOD, "1,1,0.5"]), "Labels must be whole numbers; row 14 has 0.5"),
        (csv([f"{i},{i},{i % 2}" for i in range(5001)]), "5,001 rows; at most 5,000"),
        (csv(GOOD[:5]), "5 rows; a playground needs at least 10"),
        (csv([f"{i},{i},{i}" for i in range(12)]), "12 different labels; at most 8"),
        (b"\xff\xfe\x00binary", "not a text file"),
        (b"", "not a readable CSV"),
    ],
)
def test_bad_csvs_are_refused_with_their_reason(data, message):
    with pytest.raises(ValueError, match=message):
        read_points_csv(data, "points.csv")


def test_a_good_csv_is_centred_scaled_and_relabelled():
    rows = [f"{100 + i},{50 - i},{(i % 3) * 5 + 1}" for i in range(30)]
    points = read_points_csv(csv(rows, header=" X1 , x2,label"))
    assert points.X.shape == (30, 2) and points.X.dtype == np.float32
    assert np.abs(points.X).max() == pytest.approx(1.5)
    assert sorted(set(points.y)) == [0, 1, 2] and points.classes == 3
    assert "labels 1, 6, 11 became 0 to 2" in points.note


def test_the_downloaded_data_uploads_again():
    original = make_points(PRESETS["spiral"])
    again = read_points_csv(points_csv(original).encode())
    assert again.classes == 3 and len(again.y) == len(original.y_train) + len(original.y_test)
    assert np.array_equal(again.y, np.concatenate([original.y_train, original.y_test]))


def test_what_a_file_says_is_kept_apart_from_the_sentence_about_it():
    trap = "[Log in](http://evil.example/)"
    with pytest.raises(InputError) as caught:
        read_points_csv(csv([*GOOD, f"1.0,{trap},1"]))
    assert caught.value.quoted == (trap,) and trap not in caught.value.template
    with pytest.raises(InputError) as caught:
        read_points_csv(csv(GOOD, header=f"x1,x2,{trap}"))
    assert trap in caught.value.quoted[0] and "http" not in caught.value.template
