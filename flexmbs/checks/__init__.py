"""Checks of a whole description: the units of its coordinates, sensors and signals
(`units`) and the plausibility of its values (`plausibility`). The checks of one field
while an item is built are `flexmbs.model.field_checks`."""
