"""The pipeline: register → ProcessFile (extract, ocr, enrich, embed, index, finalize) → search."""
