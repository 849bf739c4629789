"""Importers: turn other tools' topology output into hostc's Topology model."""
