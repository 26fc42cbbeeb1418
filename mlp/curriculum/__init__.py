"""The curriculum: lessons to walk a class through, challenges to set it, and the teacher task.

catalogue   the lessons: a setup per page, what to watch, why, a promise, setups to compare
challenges  goals with numbers, checked live on what a run reaches
teacher     the seed notes' teacher task trained end to end
"""
