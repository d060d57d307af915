"""Numbers printed in the papers, to set beside ours (the ``paper_value`` column).

Keys use the papers' data set names; ``paper_key`` maps our config names onto them (case, dashes and
underscores ignored), so ``connect-4``/``connect4`` both find Connect4. Stand-ins never match: Fashion-MNIST
is not MNIST. An entry under another name says which paper data set it is with ``paper_dataset:`` (:func:`linked`).

Each group of numbers has its ``*_SOURCE`` beside it: the paper and table or figure that prints them (the
scorecard's ``paper_source`` column), so a number and its citation are read, and changed, together.
"""

import contextlib
import re

# CO2 paper (Norouzi et al. 2015), Table I: test error (%) for 10 / 30 / 1000 trees.
CO2_TABLE1_SOURCE = "CO2 Forest paper, Table I"
_CO2_TABLE1_ROWS = {
    #            Random Forest        OC1 Forest            CO2 Forest
    "satimage": ((10.1, 9.4, 8.9), (10.1, 9.9, 9.5), (9.6, 9.1, 8.9)),
    "usps": ((9.0, 7.2, 6.4), (7.1, 7.1, 6.8), (5.8, 5.9, 5.5)),
    "pendigits": ((3.9, 3.3, 3.5), (3.2, 2.2, 2.3), (1.8, 1.7, 1.7)),
    "letter": ((6.6, 4.7, 3.7), (7.6, 5.0, 3.8), (3.2, 2.3, 1.8)),
    "protein": ((39.9, 35.5, 30.9), (39.1, 34.6, 30.8), (33.8, 31.2, 30.3)),
    "connect4": ((18.9, 17.4, 16.2), None, (17.1, 15.7, 14.7)),
    "mnist": ((4.5, 3.5, 2.8), None, (2.5, 2.0, 1.9)),
    "sensit": ((15.5, 14.0, 13.4), None, (14.1, 13.0, 12.5)),
    "covtype": ((3.2, 2.8, 2.6), None, (3.1, 2.7, 2.6)),
}
_CO2_METHODS = ("rf", "oc1_forest", "co2_forest")
_CO2_SIZES = (10, 30, 1000)

CO2_TABLE1 = {
    (dataset, method, n_trees): value
    for dataset, row in _CO2_TABLE1_ROWS.items()
    for method, errors in zip(_CO2_METHODS, row) if errors is not None
    for n_trees, value in zip(_CO2_SIZES, errors)
}

# CO2 paper Table II: test class-average Jaccard (%) on LFW face parts, 16 / 32 trees.
CO2_TABLE2_SOURCE = "CO2 Forest paper, Table II"
CO2_TABLE2 = {("seg_rf", 16): 32.28, ("seg_rf", 32): 34.61, ("seg_two_probe", 16): 36.03,
              ("seg_two_probe", 32): 38.61, ("seg_co2", 16): 40.33, ("seg_co2", 32): 42.55}

_ALIASES = {"covertype": "covtype", "sensitvehicle": "sensit", "combined": "sensit",
            "combinedscale": "sensit", "letterrecognition": "letter", "satimagescale": "satimage"}


def paper_key(name):
    """Our data set name as the papers' key: the paper data set the entry names (``paper_dataset``, see
    :func:`linked`), else the name lower case, letters and digits only, known aliases resolved."""
    if str(name) in _LINKS:
        return _LINKS[str(name)]
    return _normalised(name)


def _normalised(name):
    key = re.sub(r"[^a-z0-9]", "", str(name).lower())
    return _ALIASES.get(key, key)


def co2_table1(dataset, method, n_trees):
    """CO2 paper Table I test error (%) or None."""
    return CO2_TABLE1.get((paper_key(dataset), method, int(n_trees)))


def co2_table2(dataset, method, n_trees):
    """CO2 paper Table II Jaccard (%) for a segmentation method and forest size on LFW (data set names
    starting with "lfw"), else None: synthetic faces are a stand-in, not the paper's data."""
    if not paper_key(dataset).startswith("lfw"):
        return None
    return CO2_TABLE2.get((method, int(n_trees)))

# RGF paper (Johnson & Zhang), Fig. 15: training seconds (RGF-L2 mean over lambda in {1, 0.1, 0.01}, GBDT mean
# over its 9 best configurations) and their ratio, 2000 training points; our data set names.
RGF_FIG15_SOURCE = "RGF paper, Fig. 15"
RGF_FIG15 = {
    "nursery": (0.60, 0.36, 1.7), "houses": (0.92, 0.41, 2.2), "adult": (0.60, 0.37, 1.6),
    "letteram": (5.43, 1.40, 3.9), "rgfsynthq16cls": (6.40, 1.36, 4.7), "waveform40": (8.36, 1.41, 5.9),
    "rgfsynthq16reg": (10.7, 3.70, 2.9), "mnistoe": (23.6, 8.75, 3.6), "musk2": (28.7, 11.2, 2.6),
    "ctslices": (50.2, 22.6, 2.2),
}


def rgf_fig15(dataset):
    """(RGF seconds, GBDT seconds, ratio) of the RGF paper's Fig. 15 or None."""
    return RGF_FIG15.get(paper_key(dataset))


# Why our Fig. 15 row of a data set is not timed as the paper's: the scorecard scores such a row "not like for like"
# instead of better or worse, with these reasons in its note. The paper times RGF-L2 (lambda in {1, 0.1, 0.01}) and
# GBDT both with square loss, at the same number of leaves l, 3 runs of 2000 points, GBDT averaged over its 9 best
# configurations ("Empirical running time", beside Fig. 15). The paper profile's rgf_fig15_timing* experiments do the
# same (square-loss GBDT gbdt / gbdt_sq_clf, both at l = 10,000 leaves in unstaged fits, 3 seeds) except for the
# GBDT configurations: the paper's 9 best (J, s) are not listed, so every tree size J of its grid is timed at one s
# (fit time does not depend on s: studies/results/rgf_fig15_shrinkage_nursery.csv) and averaged with equal weight.
# Time depends on J several-fold (ratio_low..ratio_high of results/paper/rgf_fig15_time.csv), so the unknown mix of
# J in the paper's 9 can move the ratio more than the scorecard's tolerance: a reason on every row. Adult's feature
# count is config.yaml's adult entry. Drop a reason when the runs behind the row no longer have it (docs/rgf.md).
_GBDT_CONFIGURATIONS = ("GBDT time an equal-weight mean over tree sizes J at s = 0.1 (gbdt_configs; the paper "
                        "profile: all 6 of the paper's grid, J = 2-64), not over the paper's 9 best (J, s), which it "
                        "does not list; time depends on J several-fold (ratio_low..ratio_high)")
RGF_FIG15_CAVEATS = {
    **{dataset: (_GBDT_CONFIGURATIONS,) for dataset in RGF_FIG15},
    "adult": (_GBDT_CONFIGURATIONS, "108 features (the paper: 168)"),
}


def rgf_fig15_caveat(dataset, method=""):
    """Why our RGF Fig. 15 row of ``dataset`` is not like for like (reasons joined by "; "), or None."""
    reasons = RGF_FIG15_CAVEATS.get(paper_key(dataset))
    return "; ".join(reasons) if reasons else None


# ---- DTSemNet's Table 3, the published_* columns of decade_fixed_height (never a ``paper_value``) -------------------
# DTSemNet (Panda, Genest, Easwaran and Suganthan, "Vanilla gradient descent for oblique decision trees", ECAI 2024),
# Table 3: test accuracy (%) of single oblique trees of a fixed height, DTSemNet beside the numbers it quotes for TAO
# (Zharmagambetov et al. 2021), DGT and CART (the DGT paper, Karthikeyan et al., TMLR 2022). {data set: (height,
# DTSemNet, TAO, DGT, CART)}; the table's training rows: Letter 10,500, SatImage 3,104, Connect-4 43,236, Pendigits
# 5,995, MNIST 48,000, Protein 14,895, SensIT 63,058. Its TAO and CART columns are TAO_FIXED_DEPTH below.
DTSEMNET_TABLE3_SOURCE = ("published in DTSemNet (Panda et al., ECAI 2024), Table 3, quoting TAO from Zharmagambetov "
                          "et al. 2021 and DGT and CART from the DGT paper (Karthikeyan et al., TMLR 2022); not ours")
DTSEMNET_TABLE3 = {
    "letter": (10, 89.19, 87.41, 86.13, 70.13), "satimage": (6, 87.55, 87.41, 86.64, 84.18),
    "connect4": (8, 82.03, 81.21, 79.52, 74.03), "pendigits": (8, 97.02, 96.08, 96.36, 89.94),
    "mnist": (8, 96.16, 95.05, 94.00, 85.59), "protein": (4, 68.60, 68.41, 67.80, 57.53),
    "sensit": (10, 84.29, 82.52, 83.67, 78.31),
}
DTSEMNET_TABLE3_METHODS = ("dtsemnet", "tao", "dgt", "cart")


# Fixed-depth test accuracy (%) of TAO (sparse oblique trees) and of CART: {dataset: (depth, tao, cart)}. None of
# the four papers prints these numbers (the TAO paper has no fixed-depth table): they are Table 3 of a later
# comparison, DTSemNet ("Vanilla gradient descent for oblique decision trees", Panda et al., ECAI 2024), which
# quotes TAO from Zharmagambetov et al. 2021 and CART (and DGT) from the DGT paper (Karthikeyan et al., TMLR 2022);
# read off DTSEMNET_TABLE3 above, so the published numbers are written once.
TAO_FIXED_DEPTH_SOURCE = ("not in the four papers: DTSemNet (Panda et al., ECAI 2024), Table 3, quoting TAO from "
                          "Zharmagambetov et al. 2021 and CART from the DGT paper (Karthikeyan et al., TMLR 2022)")
TAO_FIXED_DEPTH = {name: (height, tao, cart) for name, (height, _, tao, _, cart) in DTSEMNET_TABLE3.items()}
# TAO paper (Carreira-Perpinan & Tavallali 2018), Table 1: TAO test error (%), inference time on the whole test set
# (s) and the C used. "seismic" is SensIT Vehicle (seismic), our sensit_seismic.
TAO_TABLE1_SOURCE = "TAO paper, Table 1"
TAO_TABLE1 = {
    "mnist": (5.69, 0.18, 0.09), "letter": (7.94, 0.05, 9.11), "pendigits": (3.14, 0.01, 0.03),
    "protein": (31.70, 0.05, 0.14), "sensitseismic": (27.81, 0.09, 3.28),
}
_ALIASES.update({"seismic": "sensitseismic", "seismicscale": "sensitseismic"})


def tao_fixed_depth(dataset, method, depth):
    """Test accuracy (%) of TAO (method tao_oblique) or CART (cart_gini: Gini, as the source's) at its depth."""
    entry = TAO_FIXED_DEPTH.get(paper_key(dataset))
    if entry is None or depth is None or int(depth) != entry[0]:
        return None
    return {"tao_oblique": entry[1], "cart": entry[2], "cart_gini": entry[2]}.get(method)


def tao_table1(dataset, method, column="test_error"):
    """TAO Table 1 test error (%) or inference seconds for TAO's oblique trees, or None."""
    entry = TAO_TABLE1.get(paper_key(dataset))
    if entry is None or method != "tao_oblique":
        return None
    return entry[{"test_error": 0, "inference_seconds": 1, "C": 2}[column]]




def dtsemnet_table3(dataset, depth):
    """``{"dtsemnet": %, "tao": %, "dgt": %, "cart": %}`` published in DTSemNet's Table 3 for ``dataset`` at
    ``depth``, or None when the table has no such data set or gives it at another height."""
    entry = DTSEMNET_TABLE3.get(paper_key(dataset))
    if entry is None or depth is None or depth != depth or int(depth) != entry[0]:
        return None
    return dict(zip(DTSEMNET_TABLE3_METHODS, entry[1:]))


# ---- which paper data set a config entry stands for -------------------------------------------------------------
# A config entry is matched to the papers' data sets by its name (``paper_key``) unless it says which one it stands
# for: ``paper_dataset: usps`` in its ``datasets:`` entry (e.g. an own split of USPS under the name usps_heldout).
# The tables and the scorecard look the papers' numbers up through ``linked(...)``, set from the config.
_LINKS = {}


def known_datasets():
    """The papers' data set keys that have numbers here."""
    keys = ({d for d, _, _ in CO2_TABLE1} | set(RGF_FIG15) | set(TAO_FIXED_DEPTH) | set(TAO_TABLE1) | {"lfw"}
            | set(DTSEMNET_TABLE3))
    return sorted(keys)


def dataset_links(config):
    """``{config name: paper key}`` of the ``datasets:`` entries that name their paper data set
    (``paper_dataset``); raises ValueError for a value that is no paper data set here."""
    links = {}
    for name, entry in (config.get("datasets") or {}).items():
        wanted = (entry or {}).get("paper_dataset")
        if wanted is None:
            continue
        key = _normalised(wanted)
        if key not in known_datasets():
            raise ValueError(f"datasets.{name}.paper_dataset: {wanted!r} is none of the papers' data sets with "
                             f"numbers here ({', '.join(known_datasets())})")
        links[str(name)] = key
    return links


@contextlib.contextmanager
def linked(links):
    """Within the block, the config names in ``links`` ({name: paper key}, :func:`dataset_links`) find the papers'
    numbers of that data set."""
    global _LINKS
    before, _LINKS = _LINKS, {**_LINKS, **dict(links or {})}
    try:
        yield
    finally:
        _LINKS = before
