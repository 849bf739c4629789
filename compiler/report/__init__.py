"""Views of a Plan for people: the partition as a picture, `explain`, `diff`, a review page.

Each reads only the Plan (and, for explain and diff, the artifacts the targets emit);
none is imported on the start-up path of `hostc build`.
"""
