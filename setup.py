from configparser import ConfigParser
from setuptools import setup, find_packages

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
c = cfg['DEFAULT']  # lib_name: the distribution (PyPI's `tinybook` is another project); lib_path: the import name
setup(
    name=c['lib_name'], version=c['version'], description=c['description'], license='MIT',
    author=c['author'], author_email=c['author_email'], url=c['git_url'],
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
    # data only, no .py: adreno/ (Mesa's register XML) and chapters/, the notebooks (11's `tinybook course` copies them)
    packages=find_packages(include=['tinybook', 'tinybook.*']) + ['tinybook.runtime.adreno', 'tinybook.chapters'],
    package_dir={'tinybook.chapters': 'nbs'}, python_requires='>=' + c['min_python'],
    package_data={'tinybook.runtime.adreno': ['*.xml', 'README.md'], 'tinybook.chapters': ['*.ipynb', 'results/*.json']},
    install_requires=c['requirements'].split(), extras_require={'dev': c['dev_requirements'].split(), 'cl': c['cl_requirements'].split(), 'cuda': c['cuda_requirements'].split(),
                                                                  'webgpu': c['webgpu_requirements'].split(), 'bench': c['bench_requirements'].split(),
                                                                  'llm': c['llm_requirements'].split(), 'model': c['model_requirements'].split(),
                                                                  'onnx': c['onnx_requirements'].split()},
    entry_points={'nbdev': ['tinybook=tinybook._modidx:d'], 'console_scripts': ['tinybook=tinybook.cli:main']},
    classifiers=['Programming Language :: Python :: 3'])
