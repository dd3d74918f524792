"""Symptom -> cause -> fix: the rule table, the evidence it reads, and explain for saved outputs."""
