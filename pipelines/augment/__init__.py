"""Growing candidate references for any test set from a training corpus (multiref augment): the
driver step and its options."""
