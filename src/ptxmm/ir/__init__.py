"""The program as data: ``Program`` (locations, threads and their placement, the typed instruction
records, the condition and expectations), machine values, and the mbarrier object's word. Every
front end produces it; every later stage reads it and never changes it."""
