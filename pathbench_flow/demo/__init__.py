"""The embedded demo corpus: source-filter synthesis of speakers with known voice properties."""
