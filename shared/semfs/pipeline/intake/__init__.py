"""Intake: how a file arrives (an upload, a folder, mail, an S3 or SES event), is registered, and has its
ProcessFile execution started, resumed, retried, admitted or ended."""
