"""The inference step every front end calls: dynamic batching, classification and labels, a
model's outputs checked against what it declares."""
