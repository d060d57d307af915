"""Run-folder slugs: stable, order-independent, distinct, bounded."""

import random

from hypothesis import given
from hypothesis import strategies as st

from treeopt.experiments.plan.params import MAX_SLUG_LENGTH, Inherited, is_inherit_marker, params_slug, plain_params

names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
values = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
                   st.booleans(), st.none(), st.sampled_from(["sqrt", "p^0.5", "entropy"]))
param_dicts = st.dictionaries(names, values, max_size=8)


@given(param_dicts, st.randoms())
def test_slug_does_not_depend_on_key_order(params, rnd):
    items = list(params.items())
    rnd.shuffle(items)
    assert params_slug(dict(items)) == params_slug(params)


@given(param_dicts)
def test_slug_is_a_single_safe_path_component(params):
    slug = params_slug(params)
    assert 0 < len(slug) <= MAX_SLUG_LENGTH
    assert "/" not in slug and " " not in slug and slug not in (".", "..")


@given(param_dicts, names, values, values)
def test_different_values_give_different_slugs(params, key, a, b):
    if a == b and type(a) is type(b):
        return
    assert params_slug({**params, key: a}) != params_slug({**params, key: b})


def test_readable_and_known():
    assert params_slug({"min_samples_leaf": 5, "max_depth": 6}) == "max_depth=6,min_samples_leaf=5"
    assert params_slug({"max_features": "p^0.5", "nu": 0.1, "eta": 1e-05}) == "eta=1e-05,max_features=p^0.5,nu=0.1"
    assert params_slug({}) == "defaults"


def test_long_slugs_keep_a_hash_of_everything():
    base = {f"parameter_number_{i}": i for i in range(20)}
    other = {**base, "parameter_number_19": 20}
    assert len(params_slug(base)) <= MAX_SLUG_LENGTH
    assert params_slug(base) != params_slug(other)
    assert params_slug(base) == params_slug(dict(random.Random(0).sample(list(base.items()), len(base))))


def test_inherited_values_show_a_readable_marker():
    marker = Inherited("rf", "0123456789", legacy="from-rf-co2_forest_size")
    # the label of earlier versions' folder names keeps their marker (to find those folders)
    assert params_slug({"nu": 1, "max_features": marker}) == "max_features=from-rf-co2_forest_size,nu=1"
    slugs = {params_slug({"max_features": v}) for v in (marker, Inherited("rf", "other"), Inherited("cart", "co2"),
                                                        "p^0.5", 3)}
    assert len(slugs) == 5
    # the marker the run scripts get names the selection, not the experiment
    assert plain_params({"max_features": marker, "nu": 1}) == {"max_features": "from-rf-0123456789", "nu": 1}
    assert is_inherit_marker(marker) and is_inherit_marker(str(marker))
    assert not is_inherit_marker("p^0.5") and not is_inherit_marker(None)
