"""A small source-filter speech synthesiser for the demo corpus.

The demo corpus (:mod:`pathbench_flow.demo.corpus`) must carry *known* voice properties so
that tests and the example benchmark can check that measures move the right way. A recording
cannot give that ground truth; a synthesiser whose every knob is a number can. This module
turns a text into a phonetic plan and renders it with a classic Klatt-style source-filter model:

* source: Rosenberg glottal-flow pulses (differentiated, which folds in lip radiation) on an F0
  contour with declination and word accents; jitter perturbs periods, shimmer amplitudes;
  aspiration noise, gated by the glottal open phase, is mixed in at a known noise-to-pulse ratio;
* filter: an F1-F4 all-pole vocal tract whose formants glide between vowel targets
  (Hillenbrand-like values, scaled by vocal-tract length and pulled toward schwa by
  centralisation);
* consonants: closures, bursts and band-limited frication noise, so syllables are separated by
  intensity dips (what syllable-nuclei speech-rate detectors look for).

It is not meant to be intelligible English; only the measurable acoustics matter. Everything
is vectorised numpy apart from one short loop over 5 ms filter blocks, because the
UASpeech-shaped benchmark corpus renders thousands of files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from pathbench_flow import SAMPLE_RATE

REFERENCE_RATE = 5.0
"""Syllables per second at which the base segment durations below are spoken."""

BLOCK = 80
"""Samples per vocal-tract coefficient update (5 ms): glides stay smooth, the loop stays short."""

TAIL_S = 0.03
"""Silence-free ringing allowance after the last segment, faded out, so nothing is cut abruptly."""

# Male reference formants F1-F3 (Hz), rounded from Hillenbrand et al. (1995) adult-male means;
# a speaker's formant_scale (shorter vocal tract, e.g. women ~1.17) multiplies them.
VOWELS: dict[str, tuple[float, float, float]] = {
    "iy": (342.0, 2322.0, 3000.0),
    "ih": (427.0, 2034.0, 2684.0),
    "ey": (476.0, 2089.0, 2691.0),
    "eh": (580.0, 1799.0, 2605.0),
    "ae": (588.0, 1952.0, 2601.0),
    "aa": (768.0, 1333.0, 2522.0),
    "ao": (652.0, 997.0, 2538.0),
    "ow": (497.0, 910.0, 2459.0),
    "uh": (469.0, 1122.0, 2434.0),
    "uw": (378.0, 997.0, 2343.0),
    "ah": (623.0, 1200.0, 2550.0),
    "er": (474.0, 1379.0, 1710.0),
}
SCHWA = (500.0, 1500.0, 2500.0)
"""Formants of a uniform 17.5 cm tube: where a fully centralised vowel ends up."""

F4_HZ = 3500.0
BANDWIDTHS_HZ = np.array([70.0, 100.0, 160.0, 250.0])

# Spelling -> vowel: the longest matching prefix of a vowel-letter group wins. Crude English
# orthography, but deterministic, so one text always yields one plan for every speaker.
_VOWEL_SPELLINGS = {
    "a": "ae",
    "e": "eh",
    "i": "ih",
    "o": "aa",
    "u": "ah",
    "y": "iy",
    "ee": "iy",
    "ea": "iy",
    "ie": "iy",
    "ey": "ey",
    "ai": "ey",
    "ay": "ey",
    "ei": "ey",
    "oo": "uw",
    "ue": "uw",
    "ou": "ow",
    "ow": "ow",
    "oa": "ow",
    "oe": "ow",
    "au": "ao",
    "aw": "ao",
    "oi": "ao",
    "oy": "ao",
    "er": "er",
    "ir": "er",
    "ur": "er",
}

# Consonant spellings -> (kind, voiced, quality); digraphs are matched before single letters.
_CONSONANTS: dict[str, tuple[tuple[str, bool, str], ...]] = {
    "sh": (("fricative", False, "sh"),),
    "ch": (("fricative", False, "sh"),),
    "th": (("fricative", False, "f"),),
    "ph": (("fricative", False, "f"),),
    "wh": (("liquid", True, "w"),),
    "ck": (("stop", False, ""),),
    "ng": (("nasal", True, ""),),
    "qu": (("stop", False, ""), ("liquid", True, "w")),
    "p": (("stop", False, ""),),
    "t": (("stop", False, ""),),
    "k": (("stop", False, ""),),
    "c": (("stop", False, ""),),
    "q": (("stop", False, ""),),
    "b": (("stop", True, ""),),
    "d": (("stop", True, ""),),
    "g": (("stop", True, ""),),
    "x": (("stop", False, ""), ("fricative", False, "s")),
    "s": (("fricative", False, "s"),),
    "z": (("fricative", True, "s"),),
    "j": (("fricative", True, "sh"),),
    "f": (("fricative", False, "f"),),
    "v": (("fricative", True, "f"),),
    "h": (("aspirate", False, ""),),
    "m": (("nasal", True, ""),),
    "n": (("nasal", True, ""),),
    "l": (("liquid", True, "l"),),
    "r": (("liquid", True, "r"),),
    "w": (("liquid", True, "w"),),
    "y": (("liquid", True, "y"),),
}

# Male reference F1-F3 loci of the sonorant consonants (they have their own formant targets;
# obstruents take whatever the neighbouring vowels glide through).
_SONORANT_FORMANTS = {
    ("nasal", ""): (280.0, 1250.0, 2500.0),
    ("liquid", "l"): (360.0, 1300.0, 2700.0),
    ("liquid", "r"): (350.0, 1100.0, 1600.0),
    ("liquid", "w"): (300.0, 700.0, 2200.0),
    ("liquid", "y"): (280.0, 2200.0, 2900.0),
}

# Base durations (s) at REFERENCE_RATE.
_DURATION_S = {
    "vowel": 0.13,
    "closure": 0.06,
    "burst": 0.02,
    "fricative": 0.09,
    "aspirate": 0.06,
    "nasal": 0.06,
    "liquid": 0.05,
    "dip": 0.04,
}
_STRESS_LENGTHENING = 1.25
_FINAL_LENGTHENING = 1.2
_RAMP_S = 0.01
_ACCENT_PROBABILITY = 0.5

# Per segment kind: voicing level (1 = vowel), whether voiced consonants keep a weaker voice bar,
# aspiration level (x voiced source RMS) and frication level (x vowel output RMS).
_VOICING = {"vowel": 1.0, "nasal": 0.3, "liquid": 0.5, "dip": 0.12}
_VOICED_OBSTRUENT = {"closure": 0.06, "burst": 0.1, "fricative": 0.25}
_ASPIRATION = {"aspirate": 0.6, "burst": 0.4}
_FRICATION = {"s": 0.35, "sh": 0.35, "f": 0.12, "burst": 0.6}
_FRICATION_BANDS_HZ = {
    "s": (4000.0, 7500.0),
    "sh": (2000.0, 5000.0),
    "f": (1200.0, 7500.0),
    "burst": (1500.0, 6000.0),
}


@dataclass(frozen=True)
class Phone:
    """One planned sound: ``kind`` is vowel/stop/fricative/aspirate/nasal/liquid.

    ``quality`` is the vowel key for vowels, the noise band for fricatives and the letter for
    liquids; ``stressed``/``word_final`` mark the vowels that get lengthened or accented.
    """

    kind: str
    voiced: bool = True
    quality: str = ""
    stressed: bool = False
    word_final: bool = False


@dataclass(frozen=True)
class Voice:
    """Every number that shapes one speaker's voice; written verbatim to ``truth.json``."""

    f0_mean: float
    """Mean F0 (Hz) over vowels, before jitter."""
    f0_modulation_semitones: float
    """Height of pitch accents; declination is half of it, so all F0 movement scales with it."""
    formant_scale: float
    """Vocal-tract-length factor on every formant (1 = adult male reference)."""
    tilt: float
    """One-pole low-pass coefficient on the glottal source: larger = darker, steeper spectrum."""
    breathiness: float
    """Aspiration-noise RMS / voiced-pulse RMS at the source; also widens the open quotient."""
    jitter: float
    """Relative standard deviation of glottal periods."""
    shimmer: float
    """Relative standard deviation of glottal pulse amplitudes."""
    vowel_centralisation: float
    """0 = vowel targets as listed, 1 = every vowel is schwa (a collapsed vowel space)."""
    rate: float
    """Articulation rate in syllables per second for a plain CV syllable."""
    pause_probability: float
    """Chance of a silent pause at each word boundary."""
    pause_s: float
    """Mean length of those pauses."""


def plan_text(text: str) -> list[list[Phone]]:
    """Phones per word, derived from spelling only, so every speaker says the same plan.

    One syllable per vowel-letter group (a final silent ``e`` after a consonant is dropped);
    consonant letters map to a handful of manner classes. A word without vowel letters gets a
    schwa so it still has a nucleus.
    """
    return [_plan_word(word) for word in re.findall(r"[a-z]+", text.lower())]


def _plan_word(word: str) -> list[Phone]:
    # "y" is a consonant word-initially ("yes") and before a vowel ("beyond"), else a vowel.
    is_vowel = [
        letter in "aeiou"
        or (letter == "y" and index > 0 and word[index + 1 : index + 2] not in tuple("aeiou"))
        for index, letter in enumerate(word)
    ]
    groups = [(m.start(), m.end()) for m in re.finditer(r"1+", "".join("01"[v] for v in is_vowel))]
    if len(groups) > 1 and groups[-1] == (len(word) - 1, len(word)) and word[-1] == "e":
        groups.pop()
        word = word[:-1]
    if not groups:
        return _consonant_phones(word) + [
            Phone("vowel", quality="ah", stressed=True, word_final=True)
        ]
    phones: list[Phone] = []
    cursor = 0
    for number, (start, end) in enumerate(groups):
        phones += _consonant_phones(word[cursor:start])
        spelling = word[start:end]
        # An "r" right after a single vowel letter colours it (her, bird, turn).
        if word[end : end + 1] == "r" and spelling + "r" in _VOWEL_SPELLINGS:
            spelling += "r"
            end += 1
        quality = next(
            _VOWEL_SPELLINGS[spelling[:size]]
            for size in (2, 1)
            if spelling[:size] in _VOWEL_SPELLINGS
        )
        phones.append(
            Phone(
                "vowel", quality=quality, stressed=number == 0, word_final=number == len(groups) - 1
            )
        )
        cursor = end
    return phones + _consonant_phones(word[cursor:])


def _consonant_phones(letters: str) -> list[Phone]:
    phones: list[Phone] = []
    index = 0
    while index < len(letters):
        size = 2 if letters[index : index + 2] in _CONSONANTS else 1
        spelling = letters[index : index + size]
        index += size
        if size == 1 and index < len(letters) and letters[index] == spelling:
            index += 1  # doubled letters ("ll", "tt") are one sound
        phones += [Phone(kind, voiced, quality) for kind, voiced, quality in _CONSONANTS[spelling]]
    return phones


@dataclass(frozen=True)
class _Segment:
    kind: str
    start: float
    end: float
    phone: Phone | None


def _segments(
    words: list[list[Phone]], voice: Voice, rng: np.random.Generator, lengthening: float
) -> list[_Segment]:
    """Lay the plan out in time: durations scale with 1/rate and vary ±8 % token to token."""
    scale = lengthening * REFERENCE_RATE / voice.rate
    segments: list[_Segment] = []
    clock = 0.0

    def add(kind: str, phone: Phone | None, base: float) -> None:
        nonlocal clock
        duration = base * scale * float(np.clip(1.0 + 0.08 * rng.standard_normal(), 0.7, 1.3))
        segments.append(_Segment(kind, clock, clock + duration, phone))
        clock += duration

    for word_index, phones in enumerate(words):
        if word_index and rng.random() < voice.pause_probability:
            pause = voice.pause_s * float(rng.uniform(0.6, 1.4))
            segments.append(_Segment("pause", clock, clock + pause, None))
            clock += pause
        for phone in phones:
            previous = segments[-1] if segments else None
            if phone.kind == "vowel":
                if previous is not None and previous.kind == "vowel":
                    add("dip", None, _DURATION_S["dip"])  # hiatus: keep an intensity dip
                base = _DURATION_S["vowel"]
                base *= _STRESS_LENGTHENING if phone.stressed else 1.0
                base *= _FINAL_LENGTHENING if phone.word_final else 1.0
                add("vowel", phone, base)
            elif phone.kind == "stop":
                if segments:  # an utterance-initial closure would be inaudible: start at release
                    add("closure", phone, _DURATION_S["closure"])
                add("burst", phone, _DURATION_S["burst"] * (1.0 if phone.voiced else 2.0))
            else:
                add(phone.kind, phone, _DURATION_S[phone.kind])
    return segments


def _envelope(segments: list[_Segment], levels: list[float], times: np.ndarray) -> np.ndarray:
    """Piecewise-linear level track: each segment holds its level, ramping at its edges.

    A boundary ramps as fast as its faster side allows, so stop releases stay abrupt.
    """
    ramps = [
        min(0.002 if s.kind == "burst" else _RAMP_S, (s.end - s.start) / 3.0) for s in segments
    ]
    knots: list[float] = []
    values: list[float] = []
    for index, (segment, level) in enumerate(zip(segments, levels, strict=True)):
        before = min(ramps[max(index - 1, 0)], ramps[index])
        after = min(ramps[index], ramps[min(index + 1, len(ramps) - 1)])
        knots += [segment.start + before, segment.end - after]
        values += [level, level]
    knots = [0.0, *knots, segments[-1].end]
    values = [0.0, *values, 0.0]
    return np.interp(times, knots, values)


def _formant_track(segments: list[_Segment], voice: Voice, times: np.ndarray) -> np.ndarray:
    """F1-F4 per time: held over the middle of vowels and sonorants, gliding in between.

    Every word has a vowel (see :func:`plan_text`), so there is always a target to hold.
    """
    knots: list[float] = []
    targets: list[tuple[float, ...]] = []
    for segment in segments:
        phone = segment.phone
        if phone is None:
            continue
        if phone.kind == "vowel":
            base = np.array(VOWELS[phone.quality])
            base = base + voice.vowel_centralisation * (np.array(SCHWA) - base)
            hold = 0.3
        elif (phone.kind, phone.quality) in _SONORANT_FORMANTS:
            base = np.array(_SONORANT_FORMANTS[(phone.kind, phone.quality)])
            hold = 0.4
        else:
            continue
        formants = tuple(np.append(base, F4_HZ) * voice.formant_scale)
        length = segment.end - segment.start
        knots += [segment.start + hold * length, segment.end - hold * length]
        targets += [formants, formants]
    table = np.array(targets)
    return np.stack([np.interp(times, knots, table[:, i]) for i in range(4)], axis=1)


def _f0_contour(
    segments: list[_Segment],
    voice: Voice,
    rng: np.random.Generator,
    times: np.ndarray,
    total: float,
) -> np.ndarray:
    """Declination plus pitch accents, in semitones around ``f0_mean`` over vowels.

    The first word is always accented, later words by chance (``_ACCENT_PROBABILITY``): if
    every word were accented, the peaks would cancel out against the mean and even a lively
    speaker would sound flat.
    """
    semitones = voice.f0_modulation_semitones * 0.5 * (0.5 - times / total)
    vowel_mask = np.zeros(len(times), dtype=bool)
    accented = 0
    for segment in segments:
        if segment.kind != "vowel":
            continue
        vowel_mask |= (times >= segment.start) & (times < segment.end)
        stressed = segment.phone is not None and segment.phone.stressed
        if stressed and (accented == 0 or rng.random() < _ACCENT_PROBABILITY):
            accented += 1
            centre = 0.5 * (segment.start + segment.end)
            width = 0.5 * (segment.end - segment.start) + 0.025
            height = voice.f0_modulation_semitones * float(rng.uniform(0.6, 1.0))
            semitones += height * np.exp(-0.5 * ((times - centre) / width) ** 2)
    if vowel_mask.any():
        semitones -= semitones[vowel_mask].mean()
    return voice.f0_mean * 2.0 ** (semitones / 12.0)


def _glottal_source(
    f0: np.ndarray, voice: Voice, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Differentiated Rosenberg pulses with jitter and shimmer, and the normalised flow.

    The flow (0..1 per pulse) is returned too because aspiration noise is strongest while the
    glottis is open.
    """
    n = len(f0)
    phase = np.cumsum(f0) / SAMPLE_RATE
    crossings = np.searchsorted(phase, np.arange(1, int(phase[-1]) + 4))
    nominal = SAMPLE_RATE / f0[np.minimum(crossings, n - 1)]
    periods = nominal * np.clip(1.0 + voice.jitter * rng.standard_normal(len(nominal)), 0.5, 1.5)
    starts = np.concatenate([[0.0], np.cumsum(periods)[:-1]]) - rng.uniform(0.0, periods[0])
    amplitudes = np.clip(1.0 + voice.shimmer * rng.standard_normal(len(periods)), 0.1, None)
    samples = np.arange(n, dtype=np.float64)
    pulse = np.searchsorted(starts, samples, side="right") - 1
    tau = (samples - starts[pulse]) / periods[pulse]
    open_quotient = min(0.5 + 0.35 * voice.breathiness, 0.85)
    opening, closing = 0.65 * open_quotient, 0.35 * open_quotient
    flow = np.where(
        tau < opening,
        0.5 * (1.0 - np.cos(np.pi * tau / opening)),
        np.where(tau < open_quotient, np.cos(0.5 * np.pi * (tau - opening) / closing), 0.0),
    )
    derivative = np.diff(flow * amplitudes[pulse], prepend=0.0)
    return derivative, flow


def _block_times(n: int) -> np.ndarray:
    """Centre time of each :data:`BLOCK`, where the vocal-tract coefficients are sampled."""
    return (np.arange(-(-n // BLOCK)) * BLOCK + BLOCK / 2) / SAMPLE_RATE


def _vocal_tract(source: np.ndarray, formants: np.ndarray) -> np.ndarray:
    """Time-varying cascade of four resonators, run as one 8th-order all-pole filter per block.

    Coefficients change every :data:`BLOCK` samples; each block's initial state is rebuilt from
    the past outputs for the *new* coefficients (direct form I semantics, as in LPC synthesis),
    so coefficient changes do not inject transients. Runs of identical coefficients (held vowel
    targets) are filtered in one call. Each resonator has unit gain at 0 Hz.
    """
    from scipy.signal import lfilter  # here: the workflow's parse reads this package's sizes

    blocks = len(formants)
    radius = np.exp(-np.pi * BANDWIDTHS_HZ / SAMPLE_RATE)
    theta = 2.0 * np.pi * formants / SAMPLE_RATE
    a1, a2 = -2.0 * radius * np.cos(theta), np.broadcast_to(radius**2, theta.shape)
    polys = np.ones((blocks, 1))
    for i in range(4):  # multiply in (1 + a1 z^-1 + a2 z^-2), all blocks at once
        grown = np.zeros((blocks, polys.shape[1] + 2))
        grown[:, :-2] += polys
        grown[:, 1:-1] += a1[:, i, None] * polys
        grown[:, 2:] += a2[:, i, None] * polys
        polys = grown
    gains = polys.sum(axis=1)
    changes = np.flatnonzero(np.any(np.diff(polys, axis=0) != 0.0, axis=1)) + 1
    run_starts = np.concatenate([[0], changes])
    run_ends = np.concatenate([changes, [blocks]])
    order = polys.shape[1] - 1
    out = np.empty_like(source)
    for first, last in zip(run_starts, run_ends, strict=True):
        lo, hi = first * BLOCK, min(last * BLOCK, len(source))
        if lo >= hi:
            continue
        a = polys[first]
        if lo == 0:
            out[lo:hi] = lfilter([gains[first]], a, source[lo:hi])
            continue
        # lfiltic's all-pole case: the transposed-form state that continues the past outputs.
        state = -np.correlate(a[1:], out[lo - order : lo][::-1], "full")[order - 1 :]
        out[lo:hi], _ = lfilter([gains[first]], a, source[lo:hi], zi=state)
    return out


def _voicing_level(segment: _Segment) -> float:
    """Vowels are fully voiced, sonorants partly; voiced obstruents keep a weak voice bar."""
    if segment.phone is not None and segment.phone.voiced and segment.kind in _VOICED_OBSTRUENT:
        return _VOICED_OBSTRUENT[segment.kind]
    return _VOICING.get(segment.kind, 0.0)


def _frication_band(segment: _Segment) -> str | None:
    """Which noise band a segment hisses in: its own for fricatives, a broad one for bursts."""
    if segment.kind == "burst":
        return "burst"
    if segment.kind == "fricative" and segment.phone is not None:
        return segment.phone.quality
    return None


@cache
def _band_filter(band: str) -> np.ndarray:
    from scipy.signal import butter

    low, high = _FRICATION_BANDS_HZ[band]
    return butter(4, [low, high], btype="bandpass", fs=SAMPLE_RATE, output="sos")


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values**2)))


def synthesize(
    words: list[list[Phone]], voice: Voice, rng: np.random.Generator, lengthening: float = 1.0
) -> np.ndarray:
    """Render a plan from :func:`plan_text` as float audio at :data:`SAMPLE_RATE`.

    The result starts at the first audible segment and ends :data:`TAIL_S` after the last one
    (faded), so its length is the true speech extent. Vowels are normalised to unit RMS;
    absolute level is the caller's choice. ``lengthening`` stretches every segment (isolated
    citation words are spoken more slowly than sentences).
    """
    from scipy.signal import lfilter, sosfilt

    segments = _segments(words, voice, rng, lengthening)
    total = segments[-1].end + TAIL_S
    n = int(round(total * SAMPLE_RATE))
    times = np.arange(n) / SAMPLE_RATE

    voicing = _envelope(segments, [_voicing_level(s) for s in segments], times)
    aspiration = _envelope(
        segments,
        [
            0.0 if s.phone is not None and s.phone.voiced else _ASPIRATION.get(s.kind, 0.0)
            for s in segments
        ],
        times,
    )

    pulses, flow = _glottal_source(_f0_contour(segments, voice, rng, times, total), voice, rng)
    voiced = lfilter([1.0 - voice.tilt], [1.0, -voice.tilt], pulses) * voicing
    vowel_samples = voicing >= 0.9
    source_rms = _rms(voiced[vowel_samples])
    noise = rng.standard_normal(n)
    gate = 0.3 + 0.7 * flow  # turbulence peaks while the glottis is open
    breath = voice.breathiness * source_rms / _rms(gate[vowel_samples])
    source = voiced + noise * (breath * gate * voicing + source_rms * aspiration)

    speech = _vocal_tract(source, _formant_track(segments, voice, _block_times(n)))
    speech /= _rms(speech[vowel_samples])

    bands = [_frication_band(s) for s in segments]
    for band, gain in _FRICATION.items():
        levels = [gain if used == band else 0.0 for used in bands]
        if any(levels):
            band_noise = sosfilt(_band_filter(band), rng.standard_normal(n))
            speech += band_noise / _rms(band_noise) * _envelope(segments, levels, times)

    fade = int(TAIL_S * SAMPLE_RATE)
    speech[n - fade :] *= np.linspace(1.0, 0.0, fade)
    return speech
