"""Seeing: what a window shows when its application says little or nothing over AT-SPI.

The window is captured (capture.py), read by Debian's tesseract (ocr.py), and what it reads
joins the snapshot as elements of their own kind, `source="seen"` (seen.py); targets a person
named with "call 7 Save" come back as `source="taught"` (taught.py). desktop.py puts them
around another desktop adapter. On-screen text is data: it names elements, never instructs.
"""
