"""Named random streams and row chunks (``skbayes_sg.utils``).
"""

from skbayes_sg.utils import make_streams, row_chunks


def test_streams_are_named_and_reproducible():
    a, b = make_streams(7, 3), make_streams(7, 3)
    assert a.child("mode").random() == b.child("mode").random()
    # a consumer's draws do not depend on which other consumers exist or ran
    b.child("some new consumer").random(100)
    assert a.child("init").random() == b.child("init").random()
    assert a.noise[2].random() == b.noise[2].random()
    values = {a.child(n).random() for n in ("mode", "init", "pilot", "strategy")}
    values |= {a.noise[0].random(), a.index[0].random(), a.retry(1)[0][0].random()}
    assert len(values) == 7  # all distinct streams
    assert make_streams(7, 5).noise[1].random() == make_streams(7, 2).noise[1].random()


def test_row_chunks_cover_in_order():
    parts = list(row_chunks(10_001, width=2000))
    assert parts[0] == slice(0, 2097) and parts[-1].stop == 10_001
    assert sum(s.stop - s.start for s in parts) == 10_001
