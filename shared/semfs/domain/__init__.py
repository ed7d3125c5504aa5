"""Plain domain code shared by every backend: models, errors, ids, chunking, ranking, tags."""
