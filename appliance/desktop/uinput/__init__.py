"""The uinput adapter: a virtual keyboard and pointer, with an explicit US keymap."""
