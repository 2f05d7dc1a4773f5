"""The DailyDialog job (multi-reference DailyDialog, DailyDialog++): its graph, composites and options."""
