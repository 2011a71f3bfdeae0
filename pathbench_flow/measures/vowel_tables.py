"""Vowel formant tables (F1, F2 in Hz) that seed the vowel-space clustering.

Two sets: :data:`VOWEL_FORMANTS`, checked corner vowels for this project's ``vsa_corners``
(below), and :data:`PATHBENCH_TABLES`, PathBench's full vowel inventories for the
PathBench-compatible ``vsa`` (at the end of the module).

Each language lists the point vowels of its conventional vowel space polygon: the
quadrilateral /i ae a u/ for English, whose open vowels split into front /ae/ and back /a/,
and the triangle /i a u/ otherwise. The values only start k-means; the area is computed from
the speaker's own clusters, so the tables decide which region of the F1-F2 plane each cluster
begins in, not the result.

Sources (group means, steady state / vowel midpoint):

* en: Hillenbrand, J., Getty, L. A., Clark, M. J. & Wheeler, K. (1995). Acoustic
  characteristics of American English vowels. JASA 97(5), 3099-3111, Table V (45 men,
  48 women, /hVd/ words).
* nl: Adank, P., van Hout, R. & Smits, R. (2004). An acoustic description of the vowels of
  Northern and Southern Standard Dutch. JASA 116(3), 1729-1738, Table I, Northern Standard
  Dutch (20 men, 20 women); /a/ is the long vowel /a:/.
* es: Bradlow, A. R. (1995). A comparative acoustic study of English and Spanish vowels.
  JASA 97(3), 1916-1924 (4 male speakers). The study has no female speakers; female seeds are
  the male values scaled per formant by the mean women-to-men ratio of the English corner
  vowels above (see :func:`_female_from_male`).

Italian and Mandarin are not supported yet: no table could be checked against its
publication, and an unchecked table is worse than a clear ``unsupported_language`` status.
"""

from __future__ import annotations

import numpy as np

Formants = dict[str, tuple[float, float]]
"""Vowel (IPA) -> (F1, F2) in Hz."""

_HILLENBRAND_1995: dict[str, Formants] = {
    "male": {"i": (342, 2322), "æ": (588, 1952), "ɑ": (768, 1333), "u": (378, 997)},
    "female": {"i": (437, 2761), "æ": (669, 2349), "ɑ": (936, 1551), "u": (459, 1105)},
}

_ADANK_2004_NSD: dict[str, Formants] = {
    "male": {"i": (278, 2162), "a": (670, 1425), "u": (259, 805)},
    "female": {"i": (294, 2524), "a": (912, 1572), "u": (286, 938)},
}

_BRADLOW_1995_MALE: Formants = {"i": (286, 2147), "a": (638, 1353), "u": (322, 992)}


def _female_from_male(male: Formants) -> Formants:
    """Scale male formants by the women-to-men ratio of Hillenbrand's corner vowels.

    Women's shorter vocal tracts raise F1 and F2 by roughly constant factors (about 1.21 and
    1.17 in Hillenbrand et al.); using the ratio measured in one published table keeps the
    scaling traceable instead of picking a round number.
    """
    men = np.array(list(_HILLENBRAND_1995["male"].values()), dtype=float)
    women = np.array(list(_HILLENBRAND_1995["female"].values()), dtype=float)
    ratio = (women / men).mean(axis=0)
    return {vowel: (f1 * ratio[0], f2 * ratio[1]) for vowel, (f1, f2) in male.items()}


VOWEL_FORMANTS: dict[str, dict[str, Formants]] = {
    "en": _HILLENBRAND_1995,
    "nl": _ADANK_2004_NSD,
    "es": {"male": _BRADLOW_1995_MALE, "female": _female_from_male(_BRADLOW_1995_MALE)},
}
"""Language code -> gender ("male" / "female") -> corner-vowel formants."""


def corner_vowels(language: str, gender: str) -> np.ndarray:
    """(n_vowels, 2) array of (F1, F2) seeds; KeyError for an unknown language or gender."""
    return np.array(list(VOWEL_FORMANTS[language][gender].values()), dtype=float)


# --------------------------------------------------------------- PathBench-compatible tables
PATHBENCH_TABLES: dict[str, dict[str, tuple[tuple[int, int], ...]]] = {
    # English, 12 vowels, attributed to Hillenbrand et al. (1995). PathBench's numbers are
    # not those of the paper's Table V (e.g. male /i/ 370/2299 here, 342/2322 there) and its
    # source marks them unchecked; they are kept because they seed PathBench's clustering.
    "en": {
        "female": (
            (437, 2779), (533, 2479), (543, 2320), (691, 2056), (855, 1845), (912, 1448),
            (707, 1219), (537, 1069), (524, 1331), (463, 1180), (759, 1403), (548, 1650),
        ),
        "male": (
            (370, 2299), (468, 2049), (479, 2019), (610, 1794), (738, 1661), (793, 1299),
            (624, 1089), (471, 939), (462, 1179), (395, 1029), (663, 1239), (490, 1469),
        ),
    },
    # Dutch, 15 vowels, Adank, van Hout & Smits (2004), the Southern (Belgian) variety.
    "nl": {
        "female": (
            (725, 1262), (868, 1640), (581, 1932), (436, 2420), (439, 1804), (455, 2115),
            (317, 2647), (475, 987), (321, 1019), (418, 968), (457, 1785), (337, 2077),
            (696, 1282), (670, 2159), (696, 1762),
        ),
        "male": (
            (555, 1066), (717, 1429), (475, 1616), (384, 1993), (374, 1539), (364, 1745),
            (278, 2179), (398, 850), (266, 978), (369, 862), (353, 1492), (265, 1825),
            (549, 1127), (545, 1779), (583, 1484),
        ),
    },
    # Spanish, 5 vowels, Bradlow (1995). The study has male speakers only: PathBench's
    # "female" row holds Bradlow's male means and its "male" row rounded textbook values.
    "es": {
        "female": ((286, 2147), (458, 1814), (638, 1353), (460, 1019), (322, 992)),
        "male": ((290, 2250), (450, 1850), (700, 1300), (450, 950), (300, 850)),
    },
    # Italian, 7 vowels (Standard Italian, after Bertinetto); one table for both genders.
    "it": {
        "female": ((290, 2310), (350, 2050), (490, 1950), (780, 1430), (550, 970), (390, 870),
                   (320, 800)),
        "male": ((290, 2310), (350, 2050), (490, 1950), (780, 1430), (550, 970), (390, 870),
                 (320, 800)),
    },
    # Mandarin, 11 vowels, after Yang (vowel production by Mandarin speakers of English).
    "cmn": {
        "female": (
            (340, 2641), (458, 2465), (403, 1172), (496, 1157), (906, 1429), (434, 2444),
            (762, 2078), (846, 1956), (807, 1534), (424, 1188), (752, 1243),
        ),
        "male": (
            (328, 2206), (422, 2064), (368, 1028), (444, 1111), (742, 1284), (412, 2046),
            (606, 1823), (693, 1800), (728, 1368), (377, 1054), (633, 1094),
        ),
    },
}  # fmt: skip
"""Language -> gender -> (F1, F2) Hz seeds of PathBench's vowel-space k-means, in PathBench's
order; one cluster per row. Used by :mod:`pathbench_flow.measures.vsa_pathbench` only."""


def pathbench_seeds(language: str, gender: str) -> np.ndarray:
    """(n_vowels, 2) float array of PathBench's seeds; KeyError for a language without one."""
    return np.array(PATHBENCH_TABLES[language][gender], dtype=np.float64)
