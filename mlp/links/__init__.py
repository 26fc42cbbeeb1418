"""Links: what every page's settings share, each setting declared once, and their link form.

settings  a setting's one declaration (Spec, setting()), the specs pages share, links read and written
format    numbers as a page shows them
"""
