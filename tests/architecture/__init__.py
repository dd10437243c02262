"""The architecture of the package: the floors no module may import above (layers), no import
cycle (cycles), the house rules of the sources (house rules) and of the kernel layout (house)."""
