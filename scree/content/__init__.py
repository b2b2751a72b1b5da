"""What gets indexed and how it is cut, as pure logic (bytes and names in, decisions and chunks out): files.py
(opening a note safely, R-I3), ignore_rules.py and ignore.py (the ignore policy, R-I1), chunking.py (R-C1..R-C5),
languages.py (a page's language and its translations), cjk.py (CJK text as character pairs)."""
