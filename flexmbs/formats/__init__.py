"""Models in and out of files: the TOML model file read (`toml_reader`) and written
(`serialize`); URDF robot descriptions read (`urdf_reader`), repaired (`urdf_repair`),
given geometry and beams (`urdf_geometry`, `urdf_beam`) and written as model files
(`urdf`), their meshes found (`mesh_paths`)."""
