"""The catalogue: what a person does to stored files: list and count them, tag, delete, cancel, re-link
versions, see the queue, and the tag vocabulary's counts, merge suggestions and merges."""
