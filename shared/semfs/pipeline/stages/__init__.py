"""The ProcessFile stages, one module each (leaves: they do not import one another, an import-linter
contract), with what they share: the state between them (``state``), the unit of work on the record
(``unit_of_work``) and the table the ASL's tasks resolve through (``table``)."""
