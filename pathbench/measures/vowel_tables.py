"""Published corner-vowel formants (F1, F2 in Hz) that seed the vowel-space clustering.

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
