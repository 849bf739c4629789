"""The Plan, hostc's one intermediate representation, and the records it is made of."""
