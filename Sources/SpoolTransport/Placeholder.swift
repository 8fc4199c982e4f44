// Placeholder: this module's files land in later commits.
