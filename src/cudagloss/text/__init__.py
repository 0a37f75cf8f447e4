"""Text knowledge several stages share: Markdown structure, e-mail addresses, confusable and
invisible characters, and a strict JSON parser that keeps positions."""
